"""Op-database entries that do not yet run on the emulated device, each with where
it fails (regenerate with ``python tests/device/emulated_run.py --write``; a test
fails when a listed entry starts to pass, so the lists only shrink). Entries that
stay on the host by design are in ``HOST_BY_DESIGN`` (emulated_run.py)."""

NOT_ON_DEVICE = {
}

# Second order (gradients with create_graph=True, differentiated again)
NOT_TWICE_ON_DEVICE = {
}
