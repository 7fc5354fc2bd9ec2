import { CouponCheck } from './CouponCheck.tsx';

function App() {
  return (
    <main>
      <h1>My till</h1>
      <CouponCheck />
    </main>
  );
}

export default App;
