"""The evidence site asset of each scored release."""
