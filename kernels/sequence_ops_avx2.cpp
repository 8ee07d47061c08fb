// AVX2 build of the sequence kernels (sequence_ops_impl.h), compiled with -mavx2 -mfma.
#include "kernels/sequence_ops_impl.h"

namespace starling::kernels::sequence_detail {

constexpr SequenceTable kSequenceAvx2 = make_sequence_table();

}  // namespace starling::kernels::sequence_detail
