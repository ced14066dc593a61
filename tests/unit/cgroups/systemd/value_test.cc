// org.systemd.property.<Name> annotations: runc's name rules, GVariant values, Sec → USec.
#include "cgroups/systemd/value.h"

#include <gtest/gtest.h>

namespace berth::cgroups::systemd {
namespace {

TEST(SystemdValue, ParsesGVariantText) {
  struct { const char* in; const char* out; } cases[] = {
      {"true", "b true"},
      {"false", "b false"},
      {"42", "i 42"},  // a bare integer is int32 (godbus)
      {"-7", "i -7"},
      {"1.5", "d 1.5"},
      {"uint64 30", "t 30"},
      {"@t 30", "t 30"},
      {"uint32 0x10", "u 16"},
      {"'inactive-or-failed'", "s 'inactive-or-failed'"},
      {"\"a\\\"b\"", "s 'a\"b'"},
      {"['foo.service', 'bar.service']", "as ['foo.service', 'bar.service']"},
      {"@as []", "as []"},
      {"[uint64 1, 2]", "at [1, 2]"},
      {" int16 -3 ", "n -3"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.in);
    auto v = parse_gvariant(c.in);
    ASSERT_TRUE(v) << v.error().message();
    EXPECT_EQ(v->text(), c.out);
  }
  for (const char* bad : {"", "yes", "'open", "uint64 -1", "byte 256", "int32 4294967296", "[1, 'a']", "[]",
                          "[[1]]", "1 2", "@q 'x'", "uint64 'x'", "'\\x00'", "@z 1", "nan", "1e999"}) {
    SCOPED_TRACE(bad);
    EXPECT_FALSE(parse_gvariant(bad));
  }
}

TEST(SystemdValue, AnnotationsAsRunc) {
  auto props = annotation_properties({
      {"org.systemd.property.TimeoutStopSec", "uint64 30"},
      {"org.systemd.property.CollectMode", "'inactive-or-failed'"},
      {"org.systemd.property.RuntimeMaxSec", "1.5"},
      {"org.systemd.property.CPUSec", "5"},  // no lowercase letter before "Sec": kept
      {"org.systemd.property.After", "['a.service']"},
      {"org.other.thing", "ignored"},
  });
  ASSERT_TRUE(props) << props.error().message();
  std::vector<std::string> got;
  for (const auto& p : *props) got.push_back(p.text());
  EXPECT_EQ(got, (std::vector<std::string>{"After=as ['a.service']", "CPUSec=i 5", "CollectMode=s 'inactive-or-failed'",
                                           "RuntimeMaxUSec=t 1500000", "TimeoutStopUSec=t 30000000"}));
}

TEST(SystemdValue, RefusesBadAnnotations) {
  struct { const char* key; const char* value; const char* message; } cases[] = {
      {"org.systemd.property.", "1", "Annotation org.systemd.property. name incorrect: "},
      {"org.systemd.property.Bad-Name", "1", "Annotation org.systemd.property.Bad-Name name incorrect: Bad-Name"},
      {"org.systemd.property.A/B", "1", "Annotation org.systemd.property.A/B name incorrect: A/B"},
      {"org.systemd.property.Foo", "nope", nullptr},
      {"org.systemd.property.TimeoutStopSec", "'soon'", nullptr},
      {"org.systemd.property.PIDs", "[uint32 1]", nullptr},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.key);
    auto props = annotation_properties({{c.key, c.value}});
    ASSERT_FALSE(props);
    EXPECT_EQ(props.error().kind(), ErrorKind::kInvalidSpec);
    if (c.message) {
      EXPECT_EQ(props.error().message(), c.message);
    }
  }
}

}  // namespace
}  // namespace berth::cgroups::systemd
