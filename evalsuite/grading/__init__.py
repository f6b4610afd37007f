"""The judge: a trial's verdict from the rows it wrote, the rows its goal asserts on, its trace and its final
message."""
