"""Reports of what a run or a deployment costs and how long it takes.

- :mod:`.latencias`: per-order stage latencies of a local run, from the timestamps it recorded;
- :mod:`.costes`: the cost per order of a local run's counts at ``precios-eu-south-2.json``'s prices;
- :mod:`.medidas`: both, as sections of a run's report (what ``mf-demo`` prints);
- :mod:`.reposo`: what a deployed stack costs idle, per ``samconfig.toml`` profile.
"""
