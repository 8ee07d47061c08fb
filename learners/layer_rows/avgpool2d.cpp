// Layer "avgpool2d": the mean of each `kernel`×`kernel` window, moved by `stride` (`kernel`
// unless given).
#include "learners/layer_rows/pool.h"
#include "learners/layers/pooling.h"

namespace starling::layer_kinds {

extern constexpr LayerRow avgpool2d_row = pool_row<AvgPool2D>("avgpool2d");

}  // namespace starling::layer_kinds
