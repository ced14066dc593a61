// The CUDA images' requirement language, evaluated as nvidia-container-cli's dsl.c does:
// a requirement is space-separated alternatives of which one must hold; an alternative is
// comma-separated conditions that must all hold; a condition is <rule><op><value> with rule
// cuda, driver, arch or brand and op one of = != < <= > >= (brand: = and != only, case
// insensitive). "cuda>=12.2 brand=tesla,driver>=535,driver<536" reads: CUDA 12.2, or a
// Tesla on the 535 branch. Versions compare numerically part by part ("12.10" > "12.9").
// Every NVIDIA_REQUIRE_* variable must hold, for every selected GPU (arch and brand are
// per GPU). (The design note had the separators the other way round; the toolkit's
// behaviour, which CUDA images are written for, is what counts.)
#pragma once

#include <string>
#include <vector>

#include "berth/result.h"

namespace berth::devices::nvidia {

struct Condition {
  std::string rule;  // cuda driver arch brand
  std::string op;
  std::string value;
};
using Group = std::vector<Condition>;        // AND
using Requirement = std::vector<Group>;      // OR

Result<Requirement> parse_requirement(const std::string& text);

// Facts of the host and of one GPU; "" = not known (yet).
struct Facts {
  std::string cuda, driver, arch, brand;
  std::string gpu;  // "GPU 0 (Tesla V100-SXM2-16GB)" for messages; "" when none selected
};

enum class Verdict { kHolds, kFails, kUnknown };
struct Evaluation {
  Verdict verdict = Verdict::kHolds;
  std::string unknown_rule;  // a rule whose fact was missing, when kUnknown
};
Evaluation evaluate(const Requirement& req, const Facts& facts);

// -1, 0, 1.
int compare_versions(const std::string& a, const std::string& b);

// The error for a requirement that failed (or could not be decided: `why` says why).
Error requirement_error(const std::string& text, const Evaluation& e, const Facts& facts, const std::string& why = "");

}  // namespace berth::devices::nvidia
