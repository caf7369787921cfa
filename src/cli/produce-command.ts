import type { Command } from "commander";

export function registerProduceCommand(program: Command): void {
  void program;
}
