// The list of device modules consulted by create (see device_modules.h). Modules are added
// here as they land.
#include "container/device_modules.h"

#include "devices/rdma/request.h"

namespace berth::container {

Result<devices::Edits> collect_device_edits(const spec::Spec& spec, bool) {
  devices::Edits e;
  BERTH_ASSIGN(auto rdma, devices::rdma::edits(spec, {}));  // org.berth.rdma.devices
  devices::append(e, rdma);
  return e;
}

}  // namespace berth::container
