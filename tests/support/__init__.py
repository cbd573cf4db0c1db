"""Harness code shared by the tests and the benchmarks: sites, clusters and load to run against them."""
