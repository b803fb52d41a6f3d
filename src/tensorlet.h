// tensorlet: the one header users include.
#pragma once

#include "backends/cuda/cuda.h"
#include "distributed/distributed.h"
#include "nn/linear.h"
#include "parallel/data_parallel.h"
#include "parallel/scatter_gather.h"
#include "profiler/profile.h"
#include "benchmark/timer.h"
#include "core/device.h"
#include "core/dispatch.h"
#include "core/dtype.h"
#include "ops/elementwise.h"
#include "core/error.h"
#include "ops/factories.h"
#include "ops/indexing.h"
#include "ops/joining.h"
#include "ops/linalg.h"
#include "ops/random.h"
#include "ops/reduce.h"
#include "core/scalar.h"
#include "core/shape.h"
#include "core/tensor.h"
#include "core/tensor_options.h"
#include "core/threads.h"

// The short name used throughout the docs; redeclaring an alias to the same namespace is allowed.
namespace tl = tensorlet;
