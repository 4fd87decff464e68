"""Moving an install's data between installs: a versioned archive written by export_data, read by import_data."""
