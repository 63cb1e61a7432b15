@problemName toy
@univariate false
@dimensions 2
@equalLength false
@classLabel true 1 2
@data
0,1,2:0,1,2:1
5,6:5,6:2
