@problemName empty_label
@univariate true
@classLabel true
@data
1,2:1
3,4:
