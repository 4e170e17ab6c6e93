#!/usr/bin/env python3
"""Writes the dim-spec section 10 vectors as `dimctl replay` input files.

Each file starts with `# args: ...` (the replay options) and carries `# expect <n> key=value...`
checkpoints transcribed from the spec tables; replay_test asserts them against the output.
The full outputs (*.expected) are golden files produced by `dimctl replay` and checked in.
R6 needs 65,665 events and is generated in replay_test.cc instead of being stored here.
"""
import os

HERE = os.path.dirname(os.path.abspath(__file__))
TUNE = {'PoT': 'PARKING_ON_TOP', 'PT': 'PARKING_TIRED', 'GR': 'GOING_RIGHT', 'GL': 'GOING_LEFT'}
MS = 1_000_000


def state(apply):
    return 'APPLY_NEW_PROFILE' if apply else 'MEASURE_IN_PROGRESS'


def write(name, args, title, lines, expects):
    with open(os.path.join(HERE, name + '.txt'), 'w') as f:
        f.write(f'# args: {args}\n# {title}\n')
        for n, ix, tune, st in expects:
            f.write(f'# expect {n} ix={ix} tune={TUNE[tune]} state={st}\n')
        for line in lines:
            f.write(line + '\n')


def net(name, args, title, rows, t_unit=MS):
    """rows: (ev, pkts, bytes, t, ix, tune, apply[, state override])"""
    lines, expects = [], []
    for n, r in enumerate(rows, 1):
        ev, pk, by, t, ix, tune, apply = r[:7]
        lines.append(f'net {t * t_unit} {ev} {pk} {by}')
        expects.append((n, ix, tune, r[7] if len(r) > 7 else state(apply)))
    write(name, args, title, lines, expects)


N1 = [
    (0, 0, 0, 0, 0, 'PoT', False),
    (64, 1000, 1000000, 1, 1, 'GR', True),
    (128, 2000, 2000000, 2, 1, 'GR', False),
    (192, 3200, 3200000, 3, 2, 'GR', True),
    (256, 4200, 4200000, 4, 2, 'GR', False),
    (320, 5600, 5600000, 5, 3, 'GR', True),
    (384, 6600, 6600000, 6, 3, 'GR', False),
    (448, 7800, 7800000, 7, 2, 'GL', True),
    (512, 8800, 8800000, 8, 2, 'GL', False),
    (576, 10200, 10200000, 9, 2, 'PoT', False),
    (640, 11600, 11600000, 10, 2, 'PoT', False),
    (704, 13000, 13000000, 11, 2, 'PoT', False),
]
net('n01_ramp_park_on_top', '--algo net', 'N1 ramp-up, turn on WORSE, park on top', N1)
net('n02_drop_while_parked', '--algo net', 'N2 sudden drop while parked (continues N1)', N1 + [
    (768, 13700, 13700000, 12, 1, 'GL', True),
    (832, 14400, 14400000, 13, 1, 'GL', False),
    (896, 15100, 15100000, 14, 2, 'GR', True),
])

rows, ev, pk, by = [], 0, 0, 0
prev = None
for s in range(41):
    if s:
        ev += 64
        pk += 5000 if s == 26 else 1000
        by += 5000000 if s == 26 else 1000000
    if s == 0:
        r = (2, 'PoT', False)
    elif s == 1:
        r = (1, 'GL', True)
    elif s <= 20 or s >= 32:
        if s % 2 == 0:
            r = (prev[0], prev[1], False)
        else:
            r = (2, 'GR', True) if prev[0] == 1 else (1, 'GL', True)
    elif s <= 30:
        r = (2, 'PT', False)
    else:
        r = (1, 'GL', True)
    prev = r
    rows.append((ev, pk, by, s) + r)
net('n03_tired_parking', '--algo net --start-profile 2', 'N3 tired parking', rows)

net('n04_event_rate_ties', '--algo net', 'N4 event rate breaks ties', [
    (0, 0, 0, 0, 0, 'PoT', False),
    (64, 1000, 1000000, 1, 1, 'GR', True),
    (128, 2000, 2000000, 2, 1, 'GR', False),
    (192, 4000, 4000000, 4, 2, 'GR', True),
    (256, 5000, 5000000, 5, 2, 'GR', False),
    (320, 7000, 7000000, 7, 1, 'GL', True),
    (384, 8000, 8000000, 8, 1, 'GL', False),
    (448, 9000, 9000000, 9, 2, 'GR', True),
])
net('n05_left_edge', '--algo net --start-profile 4', 'N5 going left to the left edge', [
    (0, 0, 0, 0, 4, 'PoT', False),
    (64, 500, 500000, 1, 3, 'GL', True),
    (128, 1000, 1000000, 2, 3, 'GL', False),
    (192, 1600, 1600000, 3, 2, 'GL', True),
    (256, 2200, 2200000, 4, 2, 'GL', False),
    (320, 2920, 2920000, 5, 1, 'GL', True),
    (384, 3640, 3640000, 6, 1, 'GL', False),
    (448, 4504, 4504000, 7, 0, 'GL', True),
    (512, 5368, 5368000, 8, 0, 'GL', False),
    (576, 6400, 6400000, 9, 0, 'PoT', False),
    (640, 7432, 7432000, 10, 0, 'PoT', False),
])
net('n06_on_top_going_right', '--algo net --start-profile 4', 'N6 on_top while going right', [
    (0, 0, 0, 0, 4, 'PoT', False),
    (64, 500, 500000, 1, 3, 'GL', True),
    (128, 1000, 1000000, 2, 3, 'GL', False),
    (192, 1600, 1600000, 3, 2, 'GL', True),
    (256, 2200, 2200000, 4, 2, 'GL', False),
    (320, 2700, 2700000, 5, 3, 'GR', True),
    (384, 3200, 3200000, 6, 3, 'GR', False),
    (448, 3800, 3800000, 7, 3, 'PoT', False),
])
net('n07_right_edge', '--algo net', 'N7 right edge', [
    (0, 0, 0, 0, 0, 'PoT', False),
    (64, 1000, 1000000, 1, 1, 'GR', True),
    (128, 2000, 2000000, 2, 1, 'GR', False),
    (192, 3200, 3200000, 3, 2, 'GR', True),
    (256, 4400, 4400000, 4, 2, 'GR', False),
    (320, 5840, 5840000, 5, 3, 'GR', True),
    (384, 7280, 7280000, 6, 3, 'GR', False),
    (448, 9008, 9008000, 7, 4, 'GR', True),
    (512, 10736, 10736000, 8, 4, 'GR', False),
    (576, 12810, 12810000, 9, 4, 'PoT', False),
])
net('n08_counter_wrap', '--algo net', 'N8 counter wrap-around (64-bit inputs)', [
    (65500, 4294967000, 4294000000, 0, 0, 'PoT', False),
    (65564, 4294968000, 4295000000, 1, 1, 'GR', True),
    (65628, 4294969000, 4296000000, 2, 1, 'GR', False),
    (65692, 4294970200, 4297200000, 3, 2, 'GR', True),
])
net('n09_zero_delta', '--algo net', 'N9 zero time delta; epms uses the constant 64', [
    (0, 0, 0, 0, 0, 'PoT', False),
    (64, 10, 10000, 999, 0, 'PoT', False),
    (200, 2000, 2000000, 1000000, 1, 'GR', True),
], t_unit=1)
net('n10_wait_zero_onset', '--algo net --start-profile 1',
    'N10 below 64 events, zero traffic, traffic onset', [
        (0, 0, 0, 0, 1, 'PoT', False),
        (63, 0, 0, 1, 1, 'PoT', False),
        (64, 0, 0, 2, 1, 'PoT', False),
        (128, 0, 0, 3, 1, 'PoT', False),
        (192, 1000, 1000000, 4, 0, 'GL', True),
    ])
net('n11_pending_ignored', '--algo net --apply-delay 1',
    'N11 samples ignored while a change is pending (worker held one sample)', [
        (0, 0, 0, 0, 0, 'PoT', False),
        (64, 1000, 1000000, 1, 1, 'GR', True),
        (128, 2000, 2000000, 2, 1, 'GR', False, 'APPLY_NEW_PROFILE'),
        (192, 3000, 3000000, 3, 1, 'GR', False),
        (256, 4200, 4200000, 4, 2, 'GR', True),
    ])
net('n12_counter_reset', '--algo net', 'N12 counter goes backwards', [
    (1000, 50000, 50000000, 0, 0, 'PoT', False),
    (10, 100, 100000, 1, 1, 'GR', True),
])


class Rdma:
    def __init__(self):
        self.events, self.t = [], 0

    def run(self, n, comps, spacing_us):
        for _ in range(n):
            self.t += spacing_us if self.events else 0
            self.events.append((self.t, comps))
        return self

    def at(self, t_us, comps):
        self.t = t_us
        self.events.append((t_us, comps))
        return self


def rdma(name, title, stream, checks, args='--algo rdma'):
    """checks: {event: (ix, tune, apply)}"""
    lines = [f'rdma {t * 1000} {c}' for t, c in stream.events]
    expects = [(k, ix, tune, state(apply)) for k, (ix, tune, apply) in sorted(checks.items())]
    write(name, args, title, lines, expects)


s = Rdma().run(1, 4, 10).run(64 * 3, 4, 10)
rdma('r1_steady', 'R1 steady load never moves', s,
     {k: (0, 'GR', False) for k in (1, 65, 129, 193)})
s = Rdma().at(0, 1).run(64, 1, 40).run(64, 1, 20).at(3850, 1).run(64, 1, 10).at(4490, 1)
s.run(64, 1, 10).at(5140, 8).run(64, 8, 10).at(5790, 8).run(64, 8, 10).run(64, 2, 10)
s.at(7090, 1).run(64, 1, 10)
rdma('r2_ramp_reset_reversals', 'R2 ramp, SAME-reset to 0, WORSE reversals', s, {
    65: (0, 'GR', False), 129: (1, 'GR', True), 130: (1, 'GR', False), 194: (2, 'GR', True),
    259: (0, 'GR', True), 324: (1, 'GR', True), 389: (1, 'GR', False), 453: (0, 'GL', True),
    518: (1, 'GR', True)})
s = Rdma().run(1, 4, 10).run(64, 4, 10).run(64, 2, 10).run(64, 4, 10)
rdma('r3_left_edge_bounce', 'R3 WORSE at the left edge bounces', s,
     {65: (0, 'GR', False), 129: (0, 'GR', False), 193: (1, 'GR', True)})
s = Rdma().run(1, 1, 10).run(64, 1, 10).run(64, 2, 10)
c = 4
while c <= 512:
    s.run(1, c, 10).run(64, c, 10)
    c *= 2
s.run(65, 512, 10).run(63, 1024, 10)
checks = {65: (0, 'GR', False), 129: (1, 'GR', True)}
for i, k in enumerate(range(194, 585, 65)):
    checks[k] = (i + 2, 'GR', True)
checks.update({649: (8, 'GL', False), 713: (8, 'GL', False), 777: (7, 'GL', True)})
rdma('r4_right_edge_then_left', 'R4 climb to the right edge, then BETTER moves left', s, checks)
s = Rdma().run(1, 4294967000, 10).run(64, 10, 10).run(64, 12, 10)
rdma('r5_completion_wrap', 'R5 completion counter wrap', s,
     {65: (0, 'GR', False), 129: (1, 'GR', True)})
s = Rdma().run(1, 0, 10).run(64, 0, 10).run(64, 4, 10).run(64, 8, 10)
rdma('r7_zero_completions', 'R7 zero-completion window resets the baseline', s,
     {65: (0, 'GR', False), 129: (0, 'GR', False), 193: (1, 'GR', True)})
s = Rdma().run(65, 4, 0).at(1000, 4)
rdma('r8_zero_delta', 'R8 zero time delta', s, {65: (0, 'GR', False), 66: (0, 'GR', False)})
