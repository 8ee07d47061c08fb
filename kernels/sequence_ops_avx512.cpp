// AVX-512 build of the sequence kernels (sequence_ops_impl.h), compiled with AVX-512 F/BW/DQ/VL.
#include "kernels/sequence_ops_impl.h"

namespace starling::kernels::sequence_detail {

constexpr SequenceTable kSequenceAvx512 = make_sequence_table();

}  // namespace starling::kernels::sequence_detail
