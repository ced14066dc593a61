// The requirement language: parsing, space = OR / comma = AND (as nvidia-container-cli),
// version comparison, unknown facts, error texts naming the host's versions.
#include "devices/nvidia/require.h"

#include <gtest/gtest.h>

namespace berth::devices::nvidia {
namespace {

Verdict verdict(const std::string& text, const Facts& f) {
  auto r = parse_requirement(text);
  EXPECT_TRUE(r) << r.error().message();
  return r ? evaluate(*r, f).verdict : Verdict::kUnknown;
}

const Facts kHost{"12.4", "550.54.15", "8.0", "nvidia", "GPU 0 (NVIDIA A100-SXM4-40GB)"};

TEST(NvidiaRequire, Versions) {
  EXPECT_EQ(compare_versions("12.10", "12.9"), 1);
  EXPECT_EQ(compare_versions("12.2", "12.2.0"), 0);
  EXPECT_EQ(compare_versions("535.104.05", "535.104.5"), 0);
  EXPECT_EQ(compare_versions("9", "10"), -1);
}

TEST(NvidiaRequire, OperatorsAndRules) {
  EXPECT_EQ(verdict("cuda>=12.2", kHost), Verdict::kHolds);
  EXPECT_EQ(verdict("cuda>=12.5", kHost), Verdict::kFails);
  EXPECT_EQ(verdict("cuda>12.4", kHost), Verdict::kFails);
  EXPECT_EQ(verdict("cuda<=12.4", kHost), Verdict::kHolds);
  EXPECT_EQ(verdict("cuda<12.4", kHost), Verdict::kFails);
  EXPECT_EQ(verdict("cuda=12.4", kHost), Verdict::kHolds);
  EXPECT_EQ(verdict("cuda!=12.4", kHost), Verdict::kFails);
  EXPECT_EQ(verdict("driver>=550,driver<551", kHost), Verdict::kHolds);
  EXPECT_EQ(verdict("arch>=9.0", kHost), Verdict::kFails);
  EXPECT_EQ(verdict("brand=NVIDIA", kHost), Verdict::kHolds) << "brands compare case-insensitively";
  EXPECT_EQ(verdict("brand!=tesla", kHost), Verdict::kHolds);
}

TEST(NvidiaRequire, SpaceIsOrCommaIsAnd) {
  // A CUDA 12.6 image: needs CUDA 12.6, or a Tesla on the 535 branch (forward compat).
  const std::string req = "cuda>=12.6 brand=tesla,driver>=535,driver<536 brand=nvidia,driver>=550,driver<551";
  EXPECT_EQ(verdict(req, kHost), Verdict::kHolds) << "third alternative";
  Facts geforce = kHost;
  geforce.brand = "geforce";
  EXPECT_EQ(verdict(req, geforce), Verdict::kFails);
  EXPECT_EQ(verdict("cuda>=12.6 driver>=550", kHost), Verdict::kHolds);
  EXPECT_EQ(verdict("cuda>=12.2,driver>=560", kHost), Verdict::kFails);
}

TEST(NvidiaRequire, UnknownFactsAreNotGuessed) {
  Facts no_gpu{"12.4", "550.54.15", "", "", ""};
  EXPECT_EQ(verdict("cuda>=12.2 brand=tesla", no_gpu), Verdict::kHolds) << "one alternative holds: brand never needed";
  auto r = parse_requirement("cuda>=12.6 brand=tesla,driver>=535");
  Evaluation e = evaluate(*r, no_gpu);
  EXPECT_EQ(e.verdict, Verdict::kUnknown);
  EXPECT_EQ(e.unknown_rule, "brand");
  EXPECT_EQ(verdict("cuda>=12.6 brand=tesla,driver>=560", no_gpu), Verdict::kFails) << "decided without the brand";
  Error err = requirement_error("cuda>=12.6 brand=tesla,driver>=535", e, no_gpu, "NVML unavailable");
  EXPECT_NE(err.message().find("the brand of this host is unknown (NVML unavailable)"), std::string::npos) << err.message();
}

TEST(NvidiaRequire, ErrorNamesHostVersions) {
  auto r = parse_requirement("cuda>=12.8");
  Error err = requirement_error("cuda>=12.8", evaluate(*r, kHost), kHost);
  EXPECT_EQ(err.kind(), ErrorKind::kInvalidSpec);
  EXPECT_NE(err.message().find("unsatisfied requirement \"cuda>=12.8\": host driver 550.54.15 supports CUDA 12.4"),
            std::string::npos) << err.message();
  EXPECT_NE(err.message().find("NVIDIA_DISABLE_REQUIRE"), std::string::npos);
}

TEST(NvidiaRequire, ParseErrors) {
  for (const char* bad : {"cuda", "foo>=1", "brand>=tesla", "cuda>=abc", "cuda=>12", ">=12"})
    EXPECT_FALSE(parse_requirement(bad)) << bad;
  auto r = parse_requirement("  cuda>=12.2   driver>=535 ");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->size(), 2u);
}

}  // namespace
}  // namespace berth::devices::nvidia
