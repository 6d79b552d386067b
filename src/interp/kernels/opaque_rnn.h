// Reference kernels of RNN, GRU and LSTM, registered by add_opaque_kernels.
#pragma once

#include "interp/kernel.h"

namespace orch::interp {

void add_opaque_rnn_kernels(KernelTable& table);

}  // namespace orch::interp
