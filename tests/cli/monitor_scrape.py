#!/usr/bin/python3
"""Scrapes a peer's /metrics and parses it with prometheus_client's parser (the monitor tests).

  monitor_scrape.py scrape URL OUT.json      the samples as {"name{labels}": value}; exit 1
                                             when the page does not parse
  monitor_scrape.py wait URL SECONDS OUT.json  scrape once starling_step > 0 (bounded)
  monitor_scrape.py grew FIRST.json LAST.json  every counter of FIRST is in LAST and not lower,
                                             and starling_step and the bytes sent grew
  monitor_scrape.py sent SUMMARY.json LAST.json  the sum over neighbours of the byte counters
                                             equals the summary's bytes_sent and bytes_received
"""
import json
import sys
import time
import urllib.request

from prometheus_client.parser import text_string_to_metric_families


def scrape(url):
    with urllib.request.urlopen(url + "/metrics", timeout=5) as r:
        text = r.read().decode()
    samples, types = {}, {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            labels = ",".join(f'{k}="{v}"' for k, v in sorted(s.labels.items()))
            samples[f"{s.name}{{{labels}}}"] = s.value
            types[s.name] = family.type
    if not samples:
        sys.exit(f"{url}/metrics: no samples")
    return {"samples": samples, "types": types}


def total(scrape_, name):
    return sum(v for k, v in scrape_["samples"].items() if k.startswith(name + "{"))


def main():
    cmd = sys.argv[1]
    if cmd == "scrape":
        json.dump(scrape(sys.argv[2]), open(sys.argv[3], "w"))
    elif cmd == "wait":
        deadline = time.monotonic() + float(sys.argv[3])
        while time.monotonic() < deadline:
            try:
                s = scrape(sys.argv[2])
                if total(s, "starling_step") > 0 and total(s, "starling_sent_bytes_total") > 0:
                    json.dump(s, open(sys.argv[4], "w"))
                    return
            except OSError:
                pass
            time.sleep(0.05)
        sys.exit(f"{sys.argv[2]}: no step within {sys.argv[3]} s")
    elif cmd == "grew":
        first, last = json.load(open(sys.argv[2])), json.load(open(sys.argv[3]))
        for key, value in first["samples"].items():
            name = key.split("{")[0]
            if name.endswith("_total") and first["types"].get(name[: -len("_total")]) == "counter":
                if key not in last["samples"] or last["samples"][key] < value:
                    sys.exit(f"counter {key} went from {value} to {last['samples'].get(key)}")
        for name in ("starling_step", "starling_sent_bytes_total", "starling_received_bytes_total"):
            if not total(last, name) > total(first, name):
                sys.exit(f"{name} did not grow: {total(first, name)} then {total(last, name)}")
    elif cmd == "sent":
        summary, last = json.load(open(sys.argv[2])), json.load(open(sys.argv[3]))
        for counter, key in (("starling_sent_bytes_total", "bytes_sent"), ("starling_received_bytes_total", "bytes_received")):
            if total(last, counter) != summary[key]:
                sys.exit(f"{counter} sums to {total(last, counter)}, the summary says {key} {summary[key]}")
        print(f"bytes sent {summary['bytes_sent']}, received {summary['bytes_received']}: as the summary says")
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
