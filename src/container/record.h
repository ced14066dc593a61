// JSON form of ContainerRecord (state.json) and the OCI state (`berth state`).
#pragma once

#include <string>

#include "berth/result.h"
#include "berth/state.h"

namespace berth {

template <class V> void visit(V& v, ContainerRecord& r);  // defined in record.cc

std::string record_to_json(const ContainerRecord& r);
Result<ContainerRecord> record_from_json(std::string_view text, std::string_view source);

// runc prints state with two-space indentation; hooks get it compact on stdin.
std::string oci_state_json(const OciState& s, bool indent);

}  // namespace berth
