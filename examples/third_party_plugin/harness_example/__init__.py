"""An example third-party plugin for xlqa-harness."""
