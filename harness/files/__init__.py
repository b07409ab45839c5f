"""Files on disk and over the network, benchmark-free: the ground floor every other room stands on.

* :mod:`~harness.files.io` -- atomic writes and folders, JSON and JSONL read with the file, line
  and field of any error, digests;
* :mod:`~harness.files.archives` -- unpacking the archives official data comes in, safely;
* :mod:`~harness.files.download` -- fetching a file with resumption, timeouts and checksums;
* :mod:`~harness.files.locations` -- where the harness writes when the user names no place.
"""
