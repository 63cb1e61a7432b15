@problemName unlabelled
@univariate true
@classLabel false
@data
1,2,3
2,3,4
