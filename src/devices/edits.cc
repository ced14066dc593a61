// Edits concatenation (see edits.h).
#include "devices/edits.h"

namespace berth::devices {

template <class T>
static void extend(std::vector<T>& a, const std::vector<T>& b) {
  a.insert(a.end(), b.begin(), b.end());
}

void append(Edits& a, const Edits& b) {
  extend(a.env, b.env);
  extend(a.nodes, b.nodes);
  extend(a.mounts, b.mounts);
  extend(a.symlinks, b.symlinks);
  extend(a.files, b.files);
  extend(a.overlays, b.overlays);
  extend(a.additional_gids, b.additional_gids);
  extend(a.extra_rules, b.extra_rules);
  extend(a.ldconfig, b.ldconfig);
}

}  // namespace berth::devices
