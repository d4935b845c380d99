library(testthat)
library(pysdcmicro)
test_check("pysdcmicro")
