"""What the commands print: tables (rich on a terminal, plain when piped, CSV, JSON), times
in the scenario's unit, replay's outputs and summary line, and Spark progress lines."""
