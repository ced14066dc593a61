// linux.netDevices and the exclusive-mode RDMA device moves (see netdev.h). Nothing is
// undone on failure, and nothing is moved back on delete: the runtime-spec leaves an
// interface's fate to its namespace, whose end returns physical interfaces (and RDMA
// devices) to the initial namespace and destroys virtual ones.
#include "linux/netdev.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <optional>
#include <set>

#include "linux/netlink_rdma.h"
#include "linux/netlink_route.h"
#include "util/unique_fd.h"

namespace berth::linux {
namespace {

using netlink::Socket;

bool is_template(const std::string& name) { return name.find('%') != std::string::npos; }

// The rtnetlink sockets of one create: the runtime's namespace and (opened on first use)
// the container's.
class Mover {
 public:
  Mover(Socket host, int netns_fd) : host_(std::move(host)), netns_fd_(netns_fd) {}

  Status move(const std::string& name, const std::string& new_name) {
    auto found = netlink::find_link(host_, name);
    if (!found && found.error().err() == ENODEV) return Error::sys(ENODEV, "not found in the runtime network namespace");
    BERTH_ASSIGN(netlink::Link link, std::move(found).context("find it in the runtime network namespace"));
    BERTH_ASSIGN(auto addrs, netlink::list_addresses(host_, link.index).context("read its addresses"));
    std::erase_if(addrs, [](const netlink::Address& a) { return !netlink::moves_with_device(a); });
    if (!inside_) {
      BERTH_ASSIGN(inside_, Socket::open_in(NETLINK_ROUTE, netns_fd_));
    }
    std::string target = new_name.empty() ? name : new_name;
    std::set<int> before;
    if (is_template(target)) {
      BERTH_ASSIGN(auto links, netlink::list_links(*inside_));
      for (const auto& l : links) before.insert(l.index);
    } else {
      // Checked first: the kernel moves the interface before it renames it, so a clash
      // found by the kernel would leave the interface inside, under its host name.
      BERTH_ASSIGN(bool taken, exists_inside(target));
      if (taken) return Error::sys(EEXIST, "move it into the container network namespace as " + target +
                                               ": the name is taken there");
    }
    BERTH_TRY(netlink::move_link(host_, link.index, netns_fd_, new_name)
                  .context("move it into the container network namespace" + (new_name.empty() ? "" : " as " + new_name)));
    BERTH_ASSIGN(netlink::Link moved, find_inside(target, before));
    for (const auto& a : addrs)
      BERTH_TRY(netlink::add_address(*inside_, moved.index, a)
                    .context("add address " + netlink::address_text(a) + " to " + moved.name + " inside"));
    return netlink::set_link_up(*inside_, moved.index).context("set " + moved.name + " up inside");
  }

  // Whether `name` is (still) an interface of the runtime's namespace.
  Result<bool> in_host(const std::string& name) { return exists(host_, name); }

 private:
  static Result<bool> exists(Socket& s, const std::string& name) {
    auto l = netlink::find_link(s, name);
    if (l) return true;
    if (l.error().err() == ENODEV) return false;
    return std::move(l).error();
  }
  Result<bool> exists_inside(const std::string& name) { return exists(*inside_, name); }

  // The moved interface inside: by name, or for a "%d" template the one that was not
  // there before (nothing else adds interfaces to a namespace being created).
  Result<netlink::Link> find_inside(const std::string& name, const std::set<int>& before) {
    if (!is_template(name)) return netlink::find_link(*inside_, name).context("find " + name + " inside");
    BERTH_ASSIGN(auto links, netlink::list_links(*inside_));
    for (const auto& l : links)
      if (!before.count(l.index)) return l;
    return Error::sys(ENODEV, "find the interface named from template " + name + " inside");
  }

  Socket host_;
  int netns_fd_;
  std::optional<Socket> inside_;
};

Result<bool> same_netns(int a, int b) {
  struct stat sa, sb;
  if (::fstat(a, &sa) < 0 || ::fstat(b, &sb) < 0) return Error::sys(errno, "stat network namespace");
  return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

Status move_net_devices(Mover& mv, const std::map<std::string, spec::NetDevice>& devs) {
  for (const auto& [name, dev] : devs)
    BERTH_TRY(mv.move(name, dev.name).context("linux.netDevices: interface " + name));
  return ok();
}

Error move_refused(Error e, const std::string& device) {
  if (e.err() == EOPNOTSUPP)
    e.context("its driver cannot change network namespace (no disassociate support, as rxe and siw); "
              "use the shared rdma netns mode (rdma system set netns shared) with this device");
  return std::move(e).context("rdma device " + device + ": move into the container network namespace "
                              "(exclusive rdma netns mode)");
}

Status move_rdma_devices(Mover& mv, const std::vector<RdmaMove>& moves, int netns_fd) {
  BERTH_ASSIGN(Socket s, Socket::open(NETLINK_RDMA).context("rdma netlink"));
  BERTH_ASSIGN(auto mode, netlink::rdma_netns_mode(s));
  // Shared mode: every namespace already sees every device; nothing may move.
  if (mode == netlink::RdmaNetnsMode::kShared) return ok();
  BERTH_ASSIGN(auto devices, netlink::rdma_devices(s));
  std::optional<std::vector<netlink::RdmaDevice>> inside;
  auto has = [](const std::vector<netlink::RdmaDevice>& v, const std::string& n) {
    return std::any_of(v.begin(), v.end(), [&](const auto& d) { return d.name == n; });
  };
  for (const auto& m : moves) {
    auto it = std::find_if(devices.begin(), devices.end(), [&](const auto& d) { return d.name == m.device; });
    if (it == devices.end()) {
      // Containers of one pod share the sandbox's namespace: the first one moved it.
      if (!inside) {
        BERTH_ASSIGN(Socket in, Socket::open_in(NETLINK_RDMA, netns_fd).context("rdma netlink"));
        BERTH_ASSIGN(inside, netlink::rdma_devices(in));
      }
      if (has(*inside, m.device)) continue;
      return Error::sys(ENODEV, "rdma device " + m.device +
                                    ": not in the runtime network namespace (exclusive rdma netns mode: "
                                    "another container may hold it)");
    }
    auto st = netlink::rdma_move_device(s, it->index, netns_fd);
    if (!st) return move_refused(std::move(st).error(), m.device);
    // After the device: IPoIB interfaces are re-created with it, RoCE ones follow it.
    for (const auto& nd : m.netdevs) {
      BERTH_ASSIGN(bool here, mv.in_host(nd));
      if (here) BERTH_TRY(mv.move(nd, "").context("rdma device " + m.device + ": interface " + nd));
    }
  }
  return ok();
}

}  // namespace

Status move_into_netns(const NetnsMoves& moves, pid_t init_pid) {
  if (moves.empty()) return ok();
  std::string path = "/proc/" + std::to_string(init_pid) + "/ns/net";
  UniqueFd ns(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!ns) return Error::sys(errno, "open the container network namespace " + path);
  UniqueFd own(::open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC));
  if (!own) return Error::sys(errno, "open the runtime network namespace");
  BERTH_ASSIGN(bool shared, same_netns(ns.get(), own.get()));
  if (shared) {
    if (!moves.net_devices.empty())
      return Error::invalid_spec("config.json: linux.netDevices: unable to move network devices without a private NET namespace");
    return ok();
  }
  BERTH_ASSIGN(Socket host, Socket::open(NETLINK_ROUTE));
  Mover mv(std::move(host), ns.get());
  BERTH_TRY(move_net_devices(mv, moves.net_devices));
  if (moves.rdma.empty()) return ok();
  return move_rdma_devices(mv, moves.rdma, ns.get());
}

Status move_interface(const std::string& name, const std::string& new_name, int netns_fd) {
  BERTH_ASSIGN(Socket host, Socket::open(NETLINK_ROUTE));
  Mover mv(std::move(host), netns_fd);
  return mv.move(name, new_name).context("interface " + name);
}

}  // namespace berth::linux
