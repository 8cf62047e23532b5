"""The retry-storm lab: seeded discrete-event simulations of lesson 07-05's section 8.

- :mod:`.brooker`: Marc Brooker's "Exponential Backoff And Jitter" experiment (optimistic
  concurrency clients contending on one item) for none/exponential/equal/full/decorrelated.
- :mod:`.tormenta`: the lesson's storm: 450 in-flight orders, a degrading gateway, SDK ×
  queue × workflow retries, and the four defenses toggled one by one.

Everything runs on a simulated clock (:mod:`.eventos`); no wall-clock sleeps, and the same
seed gives the same numbers. ``mf-lab`` is the command line (:mod:`.cli`).
"""
