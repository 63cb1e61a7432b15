@problemName comma
@univariate false
@dimensions 2
@classLabel true a,b c
@data
1,2,3:1,2,3:a,b
2,3,4:2,3,4:c
