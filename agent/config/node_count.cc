#include "agent/config/config.h"

namespace nodehook {

int NodeCount::Resolve(int nodes) const {
  if (!percent) return value;
  if (value <= 0 || nodes <= 0) return 0;
  int count = (value * nodes + 99) / 100;  // rounded up: 10% of 5 nodes is 1, not 0
  return count > nodes ? nodes : count;
}

}  // namespace nodehook
