"""The map step: each changed log read, analysed and rendered, wherever the map runs."""
