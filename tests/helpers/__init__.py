"""What the tests share: log writers, fakes of the seams, servers, simulated jobs, site readers."""
