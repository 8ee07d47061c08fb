// Layer "maxpool2d": the largest value of each `kernel`×`kernel` window, moved by `stride`
// (`kernel` unless given).
#include "learners/layer_rows/pool.h"
#include "learners/layers/pooling.h"

namespace starling::layer_kinds {

extern constexpr LayerRow maxpool2d_row = pool_row<MaxPool2D>("maxpool2d");

}  // namespace starling::layer_kinds
