// A container's status, derived live from the kernel and its directory: the init's pid and
// start time (a reused pid or a zombie is "stopped"), exec.fifo ("created" until `start`),
// the freezer ("paused").
#pragma once

#include "berth/spec.h"
#include "berth/state.h"
#include "container/state_store.h"

namespace berth::container {

ContainerStatus derive_status(const ContainerDir& dir, const ContainerRecord& r);
OciState to_oci_state(const ContainerRecord& r, ContainerStatus s);
std::string now_rfc3339_nano();
// The record create and restore begin with: what the spec and bundle say, created now.
ContainerRecord new_record(const spec::Spec& spec, const std::string& id, const std::string& bundle,
                           bool systemd_cgroup);

}  // namespace berth::container
