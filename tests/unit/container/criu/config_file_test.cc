// org.criu.config (issue 31 §3): where the file may be, what it may hold, and that CRIU's
// quotes of it never reach an error. On a temporary tree of the test's own uid (the owner
// checks of other uids are attacks in tests/security/criu_config_test.cc).
#include "container/criu/config_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "container/criu/request.h"

namespace berth::container::criu {
namespace {

struct Scene {
  std::string top;
  ContainerPaths paths;
  Scene() {
    char tmpl[] = "/tmp/berth-criuconf.XXXXXX";
    top = ::mkdtemp(tmpl);
    ::chmod(top.c_str(), 0755);
    for (const char* d : {"/bundle", "/bundle/rootfs", "/bundle/rootfs/etc", "/volume", "/host"})
      ::mkdir((top + d).c_str(), 0755);
    paths = {top + "/bundle", top + "/bundle/rootfs", {top + "/volume"}};
  }
  ~Scene() { std::filesystem::remove_all(top); }
  std::string file(const std::string& rel, const std::string& text = "tcp-established\n") {
    std::string p = top + rel;
    std::ofstream(p) << text;
    ::chmod(p.c_str(), 0644);
    return p;
  }
  std::string refusal(const std::string& path) {
    auto r = open_config_file(path, "org.criu.config", paths);
    return r ? std::string("accepted") : r.error().message();
  }
};

TEST(CriuConfigFile, AFileOutsideTheContainerIsOpenedAndNamedByItsFd) {
  Scene s;
  std::string p = s.file("/host/app.conf", "# comment\n\ntcp-established\n--log-file=dump2.log\nmanage-cgroups soft\n");
  auto r = open_config_file(p, "org.criu.config", s.paths);
  ASSERT_TRUE(r) << r.error().message();
  ASSERT_TRUE(r->has_value());
  Request req;
  use_config_file(req, *r);
  EXPECT_EQ(req.config_file, "/proc/self/fd/" + std::to_string((*r)->fd.get()));
  EXPECT_EQ(req.config_named, p);
  EXPECT_EQ(req.config_text, (*r)->text);
}

TEST(CriuConfigFile, NoneNamedOrMissingMeansNoFile) {
  Scene s;
  auto none = open_config_file("", "org.criu.config", s.paths);
  ASSERT_TRUE(none);
  EXPECT_FALSE(none->has_value());
  auto missing = open_config_file(s.top + "/host/absent.conf", "org.criu.config", s.paths);
  ASSERT_TRUE(missing) << missing.error().message();
  EXPECT_FALSE(missing->has_value());
  Request req;
  req.config_file = "/etc/criu/runc.conf";
  use_config_file(req, *missing);
  EXPECT_EQ(req.config_file, "") << "CRIU ignores a missing file; berth passes none";
}

TEST(CriuConfigFile, InsideTheRootfsTheBundleOrABindSourceIsRefused) {
  Scene s;
  std::string in_rootfs = s.file("/bundle/rootfs/etc/criu.conf");
  EXPECT_EQ(s.refusal(in_rootfs), "org.criu.config " + in_rootfs + ": inside the container's rootfs " + s.paths.rootfs +
                                      " (the container can write there)");
  std::string in_bundle = s.file("/bundle/criu.conf");
  EXPECT_EQ(s.refusal(in_bundle),
            "org.criu.config " + in_bundle + ": inside the bundle " + s.paths.bundle + " (the container can write there)");
  std::string in_volume = s.file("/volume/criu.conf");
  EXPECT_EQ(s.refusal(in_volume), "org.criu.config " + in_volume + ": inside the bind mount source " + s.top +
                                      "/volume (the container can write there)");
  // A missing file under the rootfs is refused too: the container could make it.
  std::string later = s.top + "/bundle/rootfs/etc/later.conf";
  EXPECT_NE(s.refusal(later).find("inside the container's rootfs"), std::string::npos) << s.refusal(later);
}

// The bundle named through a link, and the rootfs reached by a second name: the same
// directory by device and inode, whatever the strings say.
TEST(CriuConfigFile, AnotherNameOfTheRootfsIsTheRootfs) {
  Scene s;
  ASSERT_EQ(::symlink((s.top + "/bundle").c_str(), (s.top + "/bundle-link").c_str()), 0);
  s.paths.bundle = s.top + "/bundle-link";
  s.paths.rootfs = s.top + "/bundle-link/rootfs";
  std::string p = s.file("/bundle/rootfs/etc/criu.conf");
  EXPECT_NE(s.refusal(p).find(": inside the container's rootfs " + s.paths.rootfs), std::string::npos) << s.refusal(p);
}

TEST(CriuConfigFile, ALineThatIsNotAnOptionIsRefusedWithoutItsContent) {
  Scene s;
  std::string p = s.file("/host/shadow", "root:$y$j9T$secrethash:19000:0:99999:7:::\n");
  std::string r = s.refusal(p);
  EXPECT_EQ(r, "org.criu.config " + p + ": line 1 is not a CRIU option (its content is not shown)");
  EXPECT_EQ(r.find("secret"), std::string::npos);
  EXPECT_EQ(first_line_not_an_option("tcp-established\n  # c\n\n--shell-job\nlog-file \"a b\"\n"), 0u);
  EXPECT_EQ(first_line_not_an_option("tcp-established\n-----BEGIN OPENSSH PRIVATE KEY-----\n"), 2u);
  EXPECT_EQ(first_line_not_an_option("Password hunter2\n"), 1u);
}

TEST(CriuConfigFile, CriusQuotesOfAValueAreReplacedByTheOptionKey) {
  std::string conf = "tcp-established\nlog-file /var/secret/thing.log\n--action-script=\"/opt/s.sh\"\n";
  EXPECT_EQ(scrub_config_values("Bad option's argument: /var/secret/thing.log", conf, "/etc/c.conf"),
            "CRIU refused the value of option \"log-file\" of /etc/c.conf (the value is not shown)");
  EXPECT_EQ(scrub_config_values("can't run /opt/s.sh", conf, "/etc/c.conf"),
            "CRIU refused the value of option \"action-script\" of /etc/c.conf (the value is not shown)");
  EXPECT_EQ(scrub_config_values("vdso: Unexpected rt vDSO area bounds", conf, "/etc/c.conf"),
            "vdso: Unexpected rt vDSO area bounds");
  EXPECT_EQ(scrub_config_values("anything", "", ""), "anything");
}

}  // namespace
}  // namespace berth::container::criu
