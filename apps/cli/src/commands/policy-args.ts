/** Arguments shared by the `ahp policy` commands. */
import { DEFAULT_POLICY, loadPolicy, loadPolicyFile, type CompiledPolicy } from "@ahp/policy";

/** The policy named on the command line: a file, or `default` for the built-in one. */
export async function policyArgument(name: string): Promise<CompiledPolicy> {
  return name === "default" ? loadPolicy(DEFAULT_POLICY) : loadPolicyFile(name);
}
