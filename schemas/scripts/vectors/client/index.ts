import type { ClientCase } from "../format.js";
const cases: ClientCase[] = [];
export default cases;
