#!/usr/bin/env python3
"""Judges a churn run's folder (bench/swarm/churn.sh): the peers' logs pK.log, events.log,
exits.txt and the survivors' summaries. Prints a table; exits 1 when a check fails:
- the job finished: every peer that was not killed exited 0 after the churn ended and wrote
  a summary with a test accuracy above --min-accuracy; no id was handed out twice;
- one state: at every synchronous round (a view's round) the peers that published a state
  digest for it ("peers: state digest after round R: D") published the same one, and no peer
  logged a state check disagreement;
- joiners: each joiner's first trained round (its first digest) comes at most one round after
  the round it joined at ("peers: joined view V {...} at round R, taking the model ...");
- with --liar NAME (a peer started with --fault lying-seeder): a joiner caught it ("peers: peer
  ID served chunk ...: it is not asked again"), nobody else was caught, and each joiner that
  caught it published a first digest equal to the other peers' of that round;
- with --behind-nat NAMES: the survivors among them sent bytes through a relay, a reachable
  peer passed them on, and no reachable survivor sent through a relay ("relays: passed on P
  bytes between other peers; sent S of ...")."""
import argparse
import datetime
import glob
import json
import os
import re
import sys

from log_time import seconds

ADMITTED = re.compile(r"join: the swarm admits this peer as peer (\d+)")
VIEW = re.compile(r"peers: view \d+ -> (\d+): members")
JOINED = re.compile(r"peers: joined view (\d+) \{[^}]*\} at round (\d+), taking the model of iteration (\d+)")
TOOK = re.compile(r"peers: took the model of iteration (\d+)")
DIGEST = re.compile(r"peers: state digest after round (\d+): ([0-9a-f]+)")
STATE_CHECK = re.compile(r"peers: state check: (after round \d+ .*|took the majority's.*)")
CAUGHT = re.compile(r"peers: peer (\d+) [^:]*: it is not asked again")
RELAYS = re.compile(r"relays: passed on (\d+) bytes between other peers; sent (\d+) of ")


def read_log(path, name):
    """What one peer's log says: its id, its digests by (view, round), its join and first round."""
    peer = {"name": name, "id": 0 if name == "p0" else None, "digests": {}, "joined": None,
            "took_at": None, "first_round": None, "first_at": None, "state_checks": [], "errors": [],
            "caught": [], "relayed": None}
    view = 0
    with open(path, errors="replace") as f:
        for line in f:
            if m := ADMITTED.search(line):
                peer["id"] = int(m[1])
            elif m := VIEW.search(line):
                view = int(m[1])
            elif m := JOINED.search(line):
                view = int(m[1])
                if peer["first_round"] is None:
                    peer["joined"] = int(m[2])
            elif TOOK.search(line):
                if peer["first_round"] is None:
                    peer["took_at"] = seconds(line)
            elif m := DIGEST.search(line):
                r = int(m[1])
                peer["digests"][(view, r)] = m[2]
                if peer["first_round"] is None:
                    peer["first_round"], peer["first_at"] = r, seconds(line)
            elif m := STATE_CHECK.search(line):
                peer["state_checks"].append(line.strip())
            elif m := CAUGHT.search(line):
                peer["caught"].append(int(m[1]))
            elif m := RELAYS.search(line):
                peer["relayed"] = (int(m[1]), int(m[2]))
            elif " error " in line or " critical " in line:
                peer["errors"].append(line.strip())
    return peer


def check_liar(peers, liar, joiners, by_round):
    """The lying seeder was caught by a joiner, nobody else was, and its catchers' first
    digests are the agreed ones."""
    failures = []
    liar_id = peers[liar]["id"]
    catchers = [n for n in joiners if liar_id in peers[n]["caught"]]
    wrongly = {(n, i) for n in peers for i in peers[n]["caught"] if i != liar_id}
    if liar_id is None or not catchers:
        failures.append(f"no joiner caught the lying seeder {liar} (peer {liar_id})")
    for n, i in sorted(wrongly):
        failures.append(f"{n} caught peer {i}, not the lying seeder")
    for n in catchers:
        p = peers[n]
        first = next((k for k in sorted(p["digests"]) if k[1] == p["first_round"]), None)
        others = {m: d for m, d in by_round.get(first, {}).items() if m != n}
        if first is None or not others or set(others.values()) != {p["digests"][first]}:
            failures.append(f"{n} caught the lying seeder but its first digest {first} is not the others' {others}")
    print(f"lying seeder {liar} (peer {liar_id}) caught by {', '.join(catchers) or 'nobody'}; "
          f"their first digests agree with the others': {'yes' if catchers and not failures else 'no'}")
    return failures


def check_relays(peers, nat, survivors):
    """Peers behind NAT sent through a relay and only they did."""
    failures = []
    sent = {n: (peers[n]["relayed"] or (0, 0))[1] for n in survivors}
    passed = sum((peers[n]["relayed"] or (0, 0))[0] for n in survivors if n not in nat)
    through = sum(sent[n] for n in survivors if n in nat)
    if not through:
        failures.append(f"no surviving peer behind NAT ({', '.join(n for n in nat if n in survivors) or 'none'}) "
                        "sent through a relay")
    if not passed:
        failures.append("no reachable survivor passed bytes on as a relay")
    for n in survivors:
        if n not in nat and sent[n]:
            failures.append(f"{n} is reachable but sent {sent[n]} bytes through a relay")
    print(f"relays: survivors behind NAT sent {through} bytes through a relay; reachable ones passed on {passed}")
    return failures


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("folder")
    ap.add_argument("--kills", type=int, required=True)
    ap.add_argument("--joins", type=int, required=True)
    ap.add_argument("--initial", type=int, required=True, help="peers started before the churn")
    ap.add_argument("--min-accuracy", type=float, default=0.75)
    ap.add_argument("--liar", help="the peer started with --fault lying-seeder (pK)")
    ap.add_argument("--behind-nat", default="", help="the peers started with --behind-nat (pK,pL,...)")
    a = ap.parse_args()
    failures = []

    events = [line.split() for line in open(os.path.join(a.folder, "events.log"))]
    churn_end = next(float(e[0]) for e in events if e[1] == "churn_end")
    killed = {e[2] for e in events if e[1] == "kill"}
    hung = {e[2] for e in events if e[1] == "hung"}
    exited_at = {e[2]: float(e[0]) for e in events if e[1] == "exited"}
    exits = dict(line.split() for line in open(os.path.join(a.folder, "exits.txt")))
    names = sorted(exits, key=lambda n: int(n[1:]))
    peers = {n: read_log(os.path.join(a.folder, n + ".log"), n) for n in names}

    # The job finished on the survivors.
    survivors = [n for n in names if n not in killed]
    for n in survivors:
        if n in hung:
            failures.append(f"{n} still ran after --finish-timeout")
        elif exits[n] != "0":
            failures.append(f"{n} exited {exits[n]}: {peers[n]['errors'][-1] if peers[n]['errors'] else '(no error line)'}")
        elif exited_at.get(n, churn_end) < churn_end:
            failures.append(f"{n} finished before the churn ended: the job was too short (raise --epochs)")
    ids = {}
    for n in names:
        if peers[n]["id"] is not None:
            ids.setdefault(peers[n]["id"], []).append(n)
    for i, holders in ids.items():
        if len(holders) > 1:
            failures.append(f"id {i} was handed out to {', '.join(holders)}")
    accuracies = {}
    for n in survivors:
        if exits[n] != "0" or peers[n]["id"] is None:
            continue
        path = os.path.join(a.folder, "out", f"churn-peer{peers[n]['id']}.summary.json")
        if not os.path.exists(path):
            failures.append(f"{n} (peer {peers[n]['id']}) wrote no summary")
            continue
        s = json.load(open(path))
        accuracies[n] = s
        if s.get("state_check", {}).get("disagreements", 0):
            failures.append(f"{n}'s summary counts {s['state_check']['disagreements']} state disagreement(s)")
        if not s["test_accuracy"] > a.min_accuracy:
            failures.append(f"{n} ended at test accuracy {s['test_accuracy']}")
    if not accuracies:
        failures.append("no peer finished the job")

    # One state: every (view, round) digest is the same on every peer that published one.
    by_round = {}
    for n in names:
        for key, d in peers[n]["digests"].items():
            by_round.setdefault(key, {})[n] = d
    split = {k: v for k, v in by_round.items() if len(set(v.values())) > 1}
    for (view, r), v in sorted(split.items())[:5]:
        failures.append(f"view {view} round {r}: digests differ: {v}")
    rounds = {r for _, r in by_round}
    redone = {r for r in rounds if len({d for (_, r2), v in by_round.items() if r2 == r for d in v.values()}) > 1}
    checks = [line for n in names for line in peers[n]["state_checks"]]
    if checks:
        failures.append(f"{len(checks)} state check warning(s), the first: {checks[0]}")

    # Joiners train within one round of their download.
    joiners = []
    for n in names[a.initial:]:
        p = peers[n]
        if p["joined"] is None or p["first_round"] is None:
            why = "killed before it trained" if n in killed else f"never trained (exit {exits[n]})"
            if n not in killed:
                failures.append(f"{n} {why}: {p['errors'][-1] if p['errors'] else '(no error line)'}")
            joiners.append((n, p["id"], None, None, None, why))
            continue
        gap = p["first_round"] - p["joined"]
        took = p["took_at"] if p["took_at"] is not None else p["first_at"]
        wait = (p["first_at"] - took) % 86400 if took is not None else None
        joiners.append((n, p["id"], p["joined"], p["first_round"], wait, "killed later" if n in killed else "finished"))
        if gap > 1:
            failures.append(f"{n} joined at round {p['joined']} and first trained round {p['first_round']}")

    if a.liar:
        failures += check_liar(peers, a.liar, names[a.initial:], by_round)
    nat = [n for n in a.behind_nat.split(",") if n]
    if nat:
        failures += check_relays(peers, nat, [n for n in survivors if exits[n] == "0"])

    # The table.
    first_killed = "p0" in killed
    print(f"kills {a.kills} (the first peer {'among them' if first_killed else 'not among them'}), "
          f"joins {a.joins}, peers started {len(names)}")
    print(f"rounds checked {len(by_round)} (view, round) pairs over rounds {min(rounds, default=0)}..{max(rounds, default=0)}, "
          f"{sum(len(v) > 1 for v in by_round.values())} of them with 2 or more peers' digests, "
          f"digests compared {sum(len(v) for v in by_round.values())}, disagreements {len(split)}, "
          f"rounds with another digest in a later view {len(redone)}, state check warnings {len(checks)}")
    print("joiner  id    joined at round  first trained round  rounds  s from download  fate")
    for n, i, j, f, w, fate in joiners:
        cells = ["-" if x is None else str(x) for x in (i, j, f)]
        gap = "-" if j is None else str(f - j)
        print(f"{n:<7} {cells[0]:<5} {cells[1]:<16} {cells[2]:<20} {gap:<7} {'-' if w is None else f'{w:.2f}':<16} {fate}")
    print("survivor  id    test_accuracy  joined_at_step  view_changes  rounds_checked  disagreements  heals")
    for n, s in accuracies.items():
        sc = s.get("state_check", {})
        print(f"{n:<9} {s['peer_id']:<5} {s['test_accuracy']:<14} {str(s.get('joined_at_step')):<15} "
              f"{s.get('view_changes', '-'):<13} {sc.get('rounds_checked', '-'):<15} {sc.get('disagreements', '-'):<14} "
              f"{sc.get('heals', '-')}")
    for f in failures:
        print("FAIL:", f)
    print("churn: " + ("FAILED" if failures else "passed"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
