#!/usr/bin/python3
"""Judges a soak run from the kernel's side: every coalesce notification (coalesce_monitor.py)
is attributed with the churn's own write log (churn.py), and the devices left at the end are
read back. Prints "PASS name" or "FAIL name: reason" per check, like daemon_test.sh.

  kernel_witness      the listener subscribed before the daemon started and lost nothing
  allowlist_only      every notification on a name outside the allowlist is one of the churn's
                      own writes (same ifindex, name and value), or the hand-back of a device the
                      daemon had changed and that was renamed out of the allowlist since: once,
                      with exactly the device's original (docs/CONTROLLER.md, "Renames")
  drift_respected     after the other writer's change of a device, no further write to it (by
                      ifindex, whatever its name becomes), including at exit
  drift_detected      the daemon logged each of those changes as another writer's
  drift_exercised     at least one reload (which makes the daemon want to write every allowlisted
                      tap again) happened while a drifted device existed: the check above had
                      something to catch
  daemon_wrote        after each reload the daemon wrote the new profile to an allowlisted tap
  restored            every tap still present holds, after exit, the last value the churn gave it:
                      its original, or the other writer's value if it drifted. Allowlisted taps
                      are restored at exit, taps renamed out of the allowlist when they left it:
                      the daemon leaves no value of its own behind

usage: check.py NS MONITOR_LOG CHURN_LOG FINAL DAEMON_LOG
"""
import fnmatch
import json
import subprocess
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, __file__.rsplit("/", 1)[0])
from churn import ALLOW_TAP, PROFILE_PKTS, allowlisted  # noqa: E402

results = []


def report(name, problems, limit=8):
    if problems:
        more = f" (+{len(problems) - limit} more)" if len(problems) > limit else ""
        results.append(f"FAIL {name}: " + "; ".join(problems[:limit]) + more)
    else:
        results.append(f"PASS {name}")


def rx_frames(ns, name):
    r = subprocess.run(["ip", "netns", "exec", ns, "ethtool", "-c", name], text=True,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    for line in r.stdout.splitlines():
        if line.startswith("rx-frames:"):
            v = line.split(":", 1)[1].strip()
            return int(v) if v.isdigit() else v
    return None


def main():
    ns, mon_path, churn_path, final_path, daemon_log = sys.argv[1:6]
    ntfs, ready, lost = [], False, 0
    for line in open(mon_path):
        f = line.split()
        if f and f[0] == "READY":
            ready = True
        elif f and f[0] == "LOST":
            lost += int(f[1])
        elif f and f[0] == "NTF" and len(f) == 5:
            ntfs.append({"t": float(f[1]), "ifindex": int(f[2]), "name": f[3],
                         "value": int(f[4]) if f[4].isdigit() else None})
    events = [json.loads(line) for line in open(churn_path)]
    writes = [e for e in events if e["op"] == "write"]
    reloads = [e for e in events if e["op"] == "reload"]
    final = [json.loads(line) for line in open(final_path)]
    log = open(daemon_log, errors="replace").read()

    report("kernel_witness", ([] if ready else ["the listener never subscribed"]) +
           ([f"{lost} overrun(s): notifications lost"] if lost else []))

    # Each churn write is one notification (it always changes the value); match them first.
    unmatched_writes = list(writes)
    ours = set()
    for n_ix, n in enumerate(ntfs):
        for w in unmatched_writes:
            if (w["ifindex"], w["name"], w["value"]) == (n["ifindex"], n["name"], n["value"]) and \
                    n["t"] >= w["t0"] - 0.01:
                ours.add(n_ix)
                unmatched_writes.remove(w)
                break
    problems = [f"churn write {w['name']}={w['value']} (ifindex {w['ifindex']}) never notified"
                for w in unmatched_writes]
    # Per device (ifindex), in notification order: the churn's writes set its original; a write
    # under an allowlisted name is the daemon's (it may now hold a value of the daemon's); under
    # any other name only one write is the daemon's to make: the hand-back of a device renamed out
    # of the allowlist while holding the daemon's value, with exactly its original.
    original, dirty, handbacks = {}, set(), 0
    for i, n in enumerate(ntfs):
        ix = n["ifindex"]
        if i in ours:
            original[ix] = n["value"]
            dirty.discard(ix)
        elif allowlisted(n["name"]):
            (dirty.add if n["value"] != original.get(ix) else dirty.discard)(ix)
        elif ix in dirty and n["value"] == original.get(ix):
            dirty.discard(ix)
            handbacks += 1
        else:
            problems.append(f"{n['name']} (ifindex {ix}) rx-frames={n['value']} at t={n['t']:.3f}"
                            f" (its original {original.get(ix)})")
    report("allowlist_only", problems)

    problems = []
    foreign = [w for w in writes if w["why"] == "foreign"]
    for w in foreign:
        hit = [i for i, n in enumerate(ntfs) if i in ours and n["ifindex"] == w["ifindex"] and
               n["value"] == w["value"]]
        if not hit:
            continue  # reported above
        after = [n for n in ntfs[hit[0] + 1:] if n["ifindex"] == w["ifindex"]]
        problems += [f"{n['name']} (ifindex {w['ifindex']}, drifted as {w['name']} at "
                     f"t={w['t']:.3f}) written rx-frames={n['value']} at t={n['t']:.3f}"
                     for n in after]
    report("drift_respected", problems)

    report("drift_detected",
           [f"{w['name']}: no 'changed by someone else' in the daemon log" for w in foreign
            if f"{w['name']}: coalesce settings changed by someone else" not in log])
    report("drift_exercised",
           [] if any(r["drifted_present"] for r in reloads) else
           [f"{len(foreign)} foreign write(s), but no reload while a drifted device existed "
            "(run longer)"])

    problems = []
    for k, r in enumerate(reloads):
        end = reloads[k + 1]["t"] if k + 1 < len(reloads) else float("inf")
        if not any(r["t"] <= n["t"] < end and n["value"] == r["pkts"] and
                   fnmatch.fnmatchcase(n["name"], ALLOW_TAP) for n in ntfs):
            problems.append(f"no write of rx-frames={r['pkts']} after the reload at t={r['t']:.3f}")
    # A reload may find no allowlisted tap to write (all drifted or renamed away): tolerate few.
    if len(problems) > len(reloads) // 5 or not reloads:
        report("daemon_wrote", problems or ["no reload happened (run longer)"])
    else:
        report("daemon_wrote", [])

    problems = []
    for d in final:
        if d["kind"] != "tap":
            continue
        got = rx_frames(ns, d["name"])
        if got != d["expected"]:
            history = [f"{n['name']}={n['value']}" for n in ntfs if n["ifindex"] == d["ifindex"]]
            problems.append(f"{d['name']} (ifindex {d['ifindex']}{', drifted' if d['drifted'] else ''})"
                            f" rx-frames {got}, expected {d['expected']}; notified: "
                            f"{' '.join(history)}")
    report("restored", problems)

    daemon_writes = sum(1 for n in ntfs if n["value"] in PROFILE_PKTS)
    print(f"info: {len(ntfs)} coalesce notifications ({daemon_writes} of a daemon profile value), "
          f"{len(writes)} churn writes ({len(foreign)} foreign), {len(reloads)} reloads, "
          f"{len(final)} devices left, {handbacks} hand-back(s) after a rename out of the allowlist")
    for line in results:
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
