// placeholder: written with the profiler issue (4)
