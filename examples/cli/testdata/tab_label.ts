@classLabel true
@data
1,2,3:a	b
1,2,4:a	b
5,6,7:c
