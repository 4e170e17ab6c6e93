#include "dimctl/replay/replay.h"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <charconv>
#include <istream>
#include <limits>
#include <ostream>
#include <string_view>
#include <vector>

#include "dim/net_dim.h"
#include "dim/rdma_dim.h"
#include "dimctl/common/exit_codes.h"
#include "dimctl/common/result.h"

namespace dimctl::replay {
namespace {

std::vector<std::string_view> split_fields(std::string_view line) {
  std::vector<std::string_view> fields;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    const size_t begin = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
    if (i > begin) fields.push_back(line.substr(begin, i - begin));
  }
  return fields;
}

Result<uint64_t> parse_number(std::string_view text, std::string_view what, uint64_t max) {
  if (!text.empty() && text[0] == '-') {
    return DIMCTL_FAIL(0, "{} must not be negative: '{}'", what, text);
  }
  uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec == std::errc::result_out_of_range) {
    return DIMCTL_FAIL(0, "{} out of range: '{}'", what, text);
  }
  if (ec != std::errc() || end != text.data() + text.size()) {
    return DIMCTL_FAIL(0, "{} is not a number: '{}'", what, text);
  }
  if (value > max) return DIMCTL_FAIL(0, "{} out of range: '{}' (max {})", what, text, max);
  return value;
}

constexpr auto kMaxTime = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
constexpr uint64_t kMaxU64 = std::numeric_limits<uint64_t>::max();
constexpr uint64_t kMaxU32 = std::numeric_limits<uint32_t>::max();

// A syntactically valid line: time plus the counters of its kind (net: events, packets, bytes;
// rdma: completions).
struct ParsedLine {
  int64_t time_ns = 0;
  uint64_t values[3] = {0, 0, 0};
};

Result<ParsedLine> parse_line(const std::vector<std::string_view>& f, Algo algo) {
  const bool net = algo == Algo::kNet;
  const size_t want = net ? 5 : 3;
  if (f.size() != want) {
    return DIMCTL_FAIL(
        0, "expected '{}', got {} fields",
        net ? "net <time_ns> <events> <packets> <bytes>" : "rdma <time_ns> <completions>",
        f.size());
  }
  ParsedLine p;
  auto t = parse_number(f[1], "time_ns", kMaxTime);
  if (!t) return fail(std::move(t).error());
  p.time_ns = static_cast<int64_t>(*t);
  static constexpr std::string_view kNetNames[] = {"events", "packets", "bytes"};
  for (size_t i = 2; i < want; ++i) {
    auto v = parse_number(f[i], net ? kNetNames[i - 2] : "completions", net ? kMaxU64 : kMaxU32);
    if (!v) return fail(std::move(v).error());
    p.values[i - 2] = *v;
  }
  return p;
}

template <typename Dim>
std::string describe(const Dim& d, uint16_t count) {
  return fmt::format("ix={} usec={} count={} tune={} state={}", d.profile_ix(), d.profile().usec,
                     count, dim::to_string(d.tune_state()), dim::to_string(d.state()));
}

}  // namespace

int run_replay(std::istream& in, std::ostream& out, std::ostream& err, const ReplayOptions& opts) {
  if (opts.algo == Algo::kNet && opts.start_profile >= dim::kNetNumProfiles) {
    fmt::print(err, "dimctl replay: --start-profile {} out of range 0..{}\n", opts.start_profile,
               dim::kNetNumProfiles - 1);
    return kExitUsage;
  }
  dim::NetDim net(opts.mode, opts.dir, opts.start_profile);
  dim::RdmaDim rdma;
  const bool is_net = opts.algo == Algo::kNet;
  const std::string_view algo_name = is_net ? "net" : "rdma";

  std::string line;
  uint64_t line_no = 0;
  uint64_t n = 0;
  int64_t last_time = std::numeric_limits<int64_t>::min();
  uint32_t held = 0;
  while (std::getline(in, line)) {
    ++line_no;
    std::string_view text(line);
    if (const size_t hash = text.find('#'); hash != std::string_view::npos) {
      text = text.substr(0, hash);
    }
    if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
    const auto fields = split_fields(text);
    if (fields.empty()) continue;

    const auto bad = [&](std::string_view reason) {
      out.flush();
      fmt::print(err, "{}:{}: {}\n", opts.source_name, line_no, reason);
      return kExitUsage;
    };
    if (fields[0] != "net" && fields[0] != "rdma") {
      return bad(fmt::format("unknown sample kind '{}' (expected net or rdma)", fields[0]));
    }
    if (fields[0] != algo_name) {
      return bad(fmt::format("'{}' sample with --algo {}", fields[0], algo_name));
    }
    // Parse fully before touching DIM, so a bad line leaves no trace in the output.
    auto parsed = parse_line(fields, opts.algo);
    if (!parsed) return bad(parsed.error().message());
    if (parsed->time_ns < last_time) {
      return bad(fmt::format("time goes backwards ({} < {})", parsed->time_ns, last_time));
    }
    last_time = parsed->time_ns;
    const auto& v = parsed->values;
    if (is_net) {
      net.on_sample(dim::Sample::from_counters(parsed->time_ns, v[0], v[1], v[2]));
    } else {
      rdma.on_event(parsed->time_ns, static_cast<uint32_t>(v[0]));
    }

    ++n;
    fmt::print(out, "{} {}\n", n,
               is_net ? describe(net, net.profile().pkts) : describe(rdma, rdma.profile().comps));
    const bool pending =
        (is_net ? net.state() : rdma.state()) == dim::MeasureState::kApplyNewProfile;
    if (pending) {
      if (held >= opts.apply_delay) {
        net.profile_applied();
        rdma.profile_applied();
        held = 0;
      } else {
        ++held;
      }
    }
  }
  if (in.bad()) {
    fmt::print(err, "{}: read error\n", opts.source_name);
    return kExitFailure;
  }
  return kExitOk;
}

}  // namespace dimctl::replay
