#pragma once
// Host umbrella of lct (losslessly compressed tensors). Plain C++20; no CUDA.
#include <resilin/lct/bytes.hpp>
#include <resilin/lct/codebook.hpp>
#include <resilin/lct/compressed_tensor.hpp>
#include <resilin/lct/config.hpp>
#include <resilin/lct/container.hpp>
#include <resilin/lct/decode.hpp>
#include <resilin/lct/dtype.hpp>
#include <resilin/lct/encode.hpp>
#include <resilin/lct/encoded.hpp>
#include <resilin/lct/error.hpp>
#include <resilin/lct/format.hpp>
#include <resilin/lct/histogram.hpp>
#include <resilin/lct/package_merge.hpp>
#include <resilin/lct/parallel.hpp>
#include <resilin/lct/tables.hpp>
