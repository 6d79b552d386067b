// Fission rules of the pooling ops.
#include "fission/rule.h"

namespace orch::fission {

void add_pooling_rules(RuleTable&) {}

}  // namespace orch::fission
