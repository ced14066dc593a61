// The requirement language (see require.h): NVIDIA_REQUIRE_* values.
#include "devices/nvidia/require.h"

#include "util/strings.h"

namespace berth::devices::nvidia {
namespace {

Result<Condition> parse_condition(const std::string& text) {
  auto start = text.find_first_of("<>=!");
  auto end = text.find_first_not_of("<>=!", start == std::string::npos ? 0 : start);
  if (start == std::string::npos || start == 0 || end == std::string::npos)
    return Error::invalid_spec("requirement \"" + text + "\": expected <rule><op><value>");
  Condition c{str::to_lower(text.substr(0, start)), text.substr(start, end - start), text.substr(end)};
  if (c.op != "=" && c.op != "!=" && c.op != "<" && c.op != "<=" && c.op != ">" && c.op != ">=")
    return Error::invalid_spec("requirement \"" + text + "\": unknown operator \"" + c.op + "\"");
  if (c.rule != "cuda" && c.rule != "driver" && c.rule != "arch" && c.rule != "brand")
    return Error::invalid_spec("requirement \"" + text + "\": unknown rule \"" + c.rule + "\" (cuda, driver, arch, brand)");
  if (c.rule == "brand" && c.op != "=" && c.op != "!=")
    return Error::invalid_spec("requirement \"" + text + "\": brand takes = or != only");
  if (c.rule != "brand")
    for (const auto& part : str::split(c.value, '.'))
      if (!str::parse_u64(part)) return Error::invalid_spec("requirement \"" + text + "\": \"" + c.value + "\" is not a version");
  return c;
}

const std::string& fact(const Facts& f, const std::string& rule) {
  if (rule == "cuda") return f.cuda;
  if (rule == "driver") return f.driver;
  if (rule == "arch") return f.arch;
  return f.brand;
}

bool holds(const Condition& c, const std::string& have) {
  if (c.rule == "brand") return (str::to_lower(have) == str::to_lower(c.value)) == (c.op == "=");
  int r = compare_versions(have, c.value);
  if (c.op == "=") return r == 0;
  if (c.op == "!=") return r != 0;
  if (c.op == "<") return r < 0;
  if (c.op == "<=") return r <= 0;
  if (c.op == ">") return r > 0;
  return r >= 0;
}

std::string describe(const Facts& f) {
  std::string s = "host driver " + (f.driver.empty() ? "unknown" : f.driver) + " supports CUDA " + (f.cuda.empty() ? "(unknown)" : f.cuda);
  if (!f.gpu.empty()) {
    s += "; " + f.gpu;
    if (!f.brand.empty()) s += " brand " + f.brand;
    if (!f.arch.empty()) s += " arch " + f.arch;
  }
  return s;
}

}  // namespace

int compare_versions(const std::string& a, const std::string& b) {
  auto pa = str::split(a, '.'), pb = str::split(b, '.');
  for (size_t i = 0; i < std::max(pa.size(), pb.size()); ++i) {
    uint64_t x = i < pa.size() ? str::parse_u64(pa[i]).value_or(0) : 0;
    uint64_t y = i < pb.size() ? str::parse_u64(pb[i]).value_or(0) : 0;
    if (x != y) return x < y ? -1 : 1;
  }
  return 0;
}

Result<Requirement> parse_requirement(const std::string& text) {
  Requirement req;
  for (const auto& group_text : str::split_nonempty(text, ' ')) {
    Group g;
    for (const auto& cond : str::split_nonempty(group_text, ',')) {
      BERTH_ASSIGN(Condition c, parse_condition(std::string(str::trim(cond))));
      g.push_back(std::move(c));
    }
    if (!g.empty()) req.push_back(std::move(g));
  }
  return req;
}

Evaluation evaluate(const Requirement& req, const Facts& facts) {
  Evaluation out;
  if (req.empty()) return out;
  bool unknown = false;
  for (const auto& g : req) {
    bool all = true, missing = false;
    for (const auto& c : g) {
      const std::string& have = fact(facts, c.rule);
      if (have.empty()) {
        missing = true;
        if (out.unknown_rule.empty()) out.unknown_rule = c.rule;
      } else if (!holds(c, have)) {
        all = false;
        break;
      }
    }
    if (all && !missing) return Evaluation{Verdict::kHolds, ""};
    unknown = unknown || (all && missing);
  }
  out.verdict = unknown ? Verdict::kUnknown : Verdict::kFails;
  if (!unknown) out.unknown_rule.clear();
  return out;
}

Error requirement_error(const std::string& text, const Evaluation& e, const Facts& facts, const std::string& why) {
  if (e.verdict == Verdict::kUnknown)
    return Error::invalid_spec("cannot check requirement \"" + text + "\": the " + e.unknown_rule + " of " +
                               (facts.gpu.empty() ? std::string("this host") : facts.gpu) + " is unknown" +
                               (why.empty() ? "" : " (" + why + ")"));
  std::string first = text.substr(0, text.find(' '));
  std::string hint = str::starts_with(first, "cuda>=") ? ": update the driver or use an earlier CUDA image" : "";
  return Error::invalid_spec("unsatisfied requirement \"" + text + "\": " + describe(facts) + hint +
                             " (NVIDIA_DISABLE_REQUIRE=true skips the check)");
}

}  // namespace berth::devices::nvidia
