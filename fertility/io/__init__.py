"""Reading what users give: corpus specs and readers, bundled samples, sampling, safe output."""
