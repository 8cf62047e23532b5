"""``sam local invoke`` for real: the functions in Lambda's container, the rest of the world on this host.

``build-image.sh`` builds the base image SAM asks for, ``ensure-docker.sh`` gets a Docker daemon;
this package starts what an event needs where the container can reach it
(:mod:`sam_local.environment`), runs ``sam local invoke`` and reads its answer
(:mod:`sam_local.invoke`). ``python -m sam_local`` is the command line.
"""
