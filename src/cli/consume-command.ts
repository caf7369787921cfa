import type { Command } from "commander";

export function registerConsumeCommand(program: Command): void {
  void program;
}
