// Parsing config.json, process.json (exec --process) and LinuxResources (update
// --resources) into the model, and serializing them back, along spec/schema.h.
#include "berth/spec.h"
#include "spec/schema.h"

namespace berth::spec {

Result<Spec> parse_spec(std::string_view json, std::string_view source) {
  return json::parse_as<Spec>(json, source);
}

Result<Process> parse_process(std::string_view json, std::string_view source) {
  return json::parse_as<Process>(json, source);
}

Result<Resources> parse_resources(std::string_view json, std::string_view source) {
  return json::parse_as<Resources>(json, source);
}

std::string to_json(const Spec& spec, bool pretty) { return json::serialize(spec, pretty); }
std::string to_json(const Process& process, bool pretty) { return json::serialize(process, pretty); }
std::string to_json(const Resources& resources, bool pretty) { return json::serialize(resources, pretty); }

}  // namespace berth::spec
