# Sourced by the scripts: puts the CUDA toolkit on PATH when it is installed but not on PATH.
if ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH="/usr/local/cuda/bin:$PATH"
fi
RESILIN_JOBS="${RESILIN_JOBS:-$(nproc 2>/dev/null || echo 2)}"

# The CMake generator for a new build folder: Ninja where installed (on 2 cores it builds this
# project about 80 s faster than Makefiles), else CMake's default; an existing folder keeps its
# own. Usage: cmake $(resilin_generator BUILD_DIR) -S . -B BUILD_DIR
resilin_generator() {
  if [ ! -f "$1/CMakeCache.txt" ] && command -v ninja >/dev/null 2>&1; then echo "-G Ninja"; fi
}
