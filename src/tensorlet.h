// tensorlet: the one header users include.
#pragma once

#include "backends/cuda/cuda.h"
#include "distributed/distributed.h"
#include "parallel/data_parallel.h"
#include "parallel/scatter_gather.h"
#include "profiler/profile.h"
#include "profiler/timer.h"
#include "tensor/device.h"
#include "tensor/dtype.h"
#include "tensor/elementwise.h"
#include "tensor/error.h"
#include "tensor/factories.h"
#include "tensor/indexing.h"
#include "tensor/joining.h"
#include "tensor/linalg.h"
#include "tensor/random.h"
#include "tensor/reduce.h"
#include "tensor/scalar.h"
#include "tensor/shape.h"
#include "tensor/tensor.h"
#include "tensor/tensor_options.h"
#include "tensor/threads.h"

// The short name used throughout the docs; redeclaring an alias to the same namespace is allowed.
namespace tl = tensorlet;
