"""The discrete-event SAMML dataflow simulator. Depends only on fuseflowc.samml and fuseflowc.data."""
