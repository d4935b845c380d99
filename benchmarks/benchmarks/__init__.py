"""pysdcmicro's product benchmarks for airspeed velocity (asv): time, peak memory and the
information loss (``track_``) of the methods a user calls. See ``benchmarks/asv.conf.json``."""
