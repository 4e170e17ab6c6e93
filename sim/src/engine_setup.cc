// The Engine built from a workload and a policy (stages, queues, cores, the policy's DIM or
// controller), its phases, and the profile tables' moderations (engine.h).
#include "engine.h"

#include <algorithm>
#include <cmath>

#include "arrival_schedule.h"
#include "controller_bridge.h"

namespace dimctl::sim {

Moderation moderation_of(ProfileTable table, uint8_t ix) {
  switch (table) {
    case ProfileTable::kNetEqe:
    case ProfileTable::kNetCqe: {
      const auto& t = dim::net_profiles(
          table == ProfileTable::kNetCqe ? dim::CqPeriodMode::kCqe : dim::CqPeriodMode::kEqe,
          dim::Direction::kRx);
      const dim::Profile& p = t[std::min<size_t>(ix, t.size() - 1)];
      return {std::max<uint32_t>(p.pkts, 1), int64_t{p.usec} * 1000};
    }
    case ProfileTable::kRdma: {
      const dim::Profile& p =
          dim::kRdmaProfiles[std::min<size_t>(ix, dim::kRdmaProfiles.size() - 1)];
      return {std::max<uint32_t>(p.comps, 1), int64_t{p.usec} * 1000};
    }
  }
  return {};
}

int table_size(ProfileTable table) {
  return table == ProfileTable::kRdma ? dim::kRdmaNumProfiles : dim::kNetNumProfiles;
}

Engine::Engine(const Workload& w, const PolicySpec& p)
    : w_(w), p_(p), table_(p.table(w.table)), stages_(w.stages) {
  const auto timer = p.timer();
  for (uint32_t s = 0; s < stages_.size(); ++s) {
    if (!stages_[s].moderated) continue;
    moderated_stages_.push_back(s);
    if (timer) stages_[s].timer = *timer;
  }
  end_ns_ = w.duration_ns();
  for (const StageSpec& s : stages_) service_.emplace_back(s.service);

  // Cores: stage s owns cores [base_s, base_s + cores_s).
  std::vector<uint32_t> core_base;
  for (uint32_t s = 0; s < stages_.size(); ++s) {
    core_base.push_back(static_cast<uint32_t>(cores_.size()));
    for (uint32_t c = 0; c < stages_[s].cores; ++c) {
      Core core;
      core.stage = s;
      core.measure_rng = Rng::stream(w.seed ^ 0x6d656173757265ULL, s + 1, c + 1);
      cores_.push_back(std::move(core));
    }
  }
  cqs_.resize(stages_.size() * w.queues);
  servers_.resize(stages_.size() * w.queues);
  for (uint32_t s = 0; s < stages_.size(); ++s) {
    for (uint32_t q = 0; q < w.queues; ++q) {
      Cq& cq = cqs_[cq_id(s, q)];
      cq.ring.resize(64);
      cq.stage = s;
      cq.queue = q;
      cq.core = core_base[s] + q % stages_[s].cores;
      cq.moderated = stages_[s].moderated;
      if (stages_[s].servers > 0) servers_[cq_id(s, q)].free_at.assign(stages_[s].servers, 0);
      if (!cq.moderated) {
        cq.mod = stages_[s].fixed;
        continue;
      }
      using K = PolicySpec::Kind;
      switch (p.kind) {
        case K::kNone:
        case K::kOracle:
          cq.mod = Moderation{1, 0};
          break;
        case K::kStatic:
          cq.mod = moderation_of(table_, p.phase_static.empty() ? p.static_index
                                         : p.phase_lag_ns > 0   ? 0
                                                                : p.phase_static.front());
          break;
        case K::kKernelNet:
          cq.net = std::make_unique<dim::NetDim>(
              p.cqe ? dim::CqPeriodMode::kCqe : dim::CqPeriodMode::kEqe, dim::Direction::kRx);
          cq.mod = moderation_of(table_, cq.net->profile_ix());
          break;
        case K::kKernelRdma:
          cq.rdma = std::make_unique<dim::RdmaDim>();
          cq.mod = moderation_of(table_, cq.rdma->profile_ix());
          break;
        case K::kController:
          cq.mod = moderation_of(table_, 0);
          break;
      }
    }
  }
  for (const SourceSpec& spec : w.sources) {
    SourceState st;
    st.spec = spec;
    st.think = Dist::Sampler(spec.think);
    auto it = std::find(flows_.begin(), flows_.end(), spec.flow);
    st.flow = static_cast<uint32_t>(it - flows_.begin());
    if (it == flows_.end()) flows_.push_back(spec.flow);
    const auto index = sources_.size();
    for (uint32_t q = 0; q < w.queues; ++q) st.rng.push_back(Rng::stream(w.seed, index + 1, q + 1));
    st.outstanding.assign(w.queues, 0);
    st.target_depth.assign(w.queues, spec.depth);
    st.on.assign(w.queues, 0);
    st.next_arrival.assign(w.queues, -1);
    sources_.push_back(std::move(st));
  }
  int64_t t = 0;
  for (const Phase& ph : w.phases) {
    phase_start_.push_back(t);
    PhaseMetrics m;
    m.phase = ph.name;
    m.start_ns = std::max(t, w.warmup_ns);
    t += ph.duration_ns;
    m.end_ns = std::max(t, m.start_ns);
    for (const std::string& f : flows_) m.flows.push_back(FlowMetrics{f, {}});
    for (const StageSpec& s : stages_) m.cores += s.cores;
    result_.phases.push_back(std::move(m));
  }
  const auto nwin = static_cast<size_t>((end_ns_ + w.window_ns - 1) / w.window_ns);
  result_.windows.resize(nwin);
  for (size_t i = 0; i < nwin; ++i) result_.windows[i].t_ns = static_cast<int64_t>(i) * w.window_ns;
}

Engine::~Engine() = default;

void Engine::apply_phase_static(uint32_t phase) {
  const Moderation m = moderation_of(table_, p_.phase_static[phase]);
  for (uint32_t id = 0; id < cqs_.size(); ++id) {
    if (!cqs_[id].moderated) continue;
    cqs_[id].pending_mod = m;
    apply(id);
  }
}

void Engine::enter_phase(uint32_t phase) {
  phase_ = phase;
  const Phase& ph = w_.phases[phase];
  if (p_.kind == PolicySpec::Kind::kStatic && phase < p_.phase_static.size()) {
    if (p_.phase_lag_ns > 0) {
      push(now_ + p_.phase_lag_ns, Ev::kLagApply, phase, 0);
    } else if (phase > 0) {
      apply_phase_static(phase);
    }
  }
  for (uint32_t s = 0; s < sources_.size(); ++s) {
    SourceState& st = sources_[s];
    for (uint32_t q = 0; q < w_.queues; ++q) {
      switch (st.spec.kind) {
        case SourceSpec::Kind::kClosed: {
          st.target_depth[q] = ph.depth.value_or(st.spec.depth);
          while (st.outstanding[q] < st.target_depth[q]) issue_closed(s, q, now_);
          break;
        }
        case SourceSpec::Kind::kPoisson:
        case SourceSpec::Kind::kTrace:
          if (st.next_arrival[q] < 0 || phase == 0) schedule_arrival(s, q, now_);
          break;
        case SourceSpec::Kind::kOnOff:
          if (phase == 0) {
            st.on[q] = 1;
            schedule_arrival(s, q, now_);
            const double on = st.spec.periodic
                                  ? static_cast<double>(st.spec.on_ns)
                                  : st.rng[q].exponential(static_cast<double>(st.spec.on_ns));
            push(now_ + std::max<int64_t>(1, static_cast<int64_t>(on)), Ev::kToggle, s, q);
          }
          break;
      }
    }
  }
}

PhaseMetrics sum_phases(const std::vector<PhaseMetrics>& phases) {
  PhaseMetrics t;
  t.phase = "total";
  if (phases.empty()) return t;
  t.start_ns = phases.front().start_ns;
  t.end_ns = phases.back().end_ns;
  t.cores = phases.front().cores;
  for (const PhaseMetrics& p : phases) {
    t.latency.merge(p.latency);
    for (const FlowMetrics& f : p.flows) {
      auto it = std::find_if(t.flows.begin(), t.flows.end(),
                             [&](const FlowMetrics& x) { return x.flow == f.flow; });
      if (it == t.flows.end()) {
        t.flows.push_back(f);
      } else {
        it->latency.merge(f.latency);
      }
    }
    t.completions += p.completions;
    t.interrupts += p.interrupts;
    t.polls += p.polls;
    t.moderation_changes += p.moderation_changes;
    t.cpu_busy_ns += p.cpu_busy_ns;
  }
  return t;
}

}  // namespace dimctl::sim
